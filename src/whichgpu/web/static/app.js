// whichgpu: a little progressive enhancement; every page works without it.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // after a submission, the answer's summary line takes the focus (and the viewport)
  const summary = document.getElementById("summary");
  if (summary) summary.focus();
  const form = document.getElementById("recommend-form");
  if (!form) return;
  const task = form.querySelector("#task");
  const inference = form.querySelectorAll(".inference");
  const perTask = form.querySelectorAll("[data-tasks]");
  const sync = () => {
    const serving = task.value === "inference";
    inference.forEach((el) => el.classList.toggle("hidden", !serving));
    // the fields the chosen task reads; the others hidden and not sent
    perTask.forEach((el) => {
      const off = !el.dataset.tasks.split(" ").includes(task.value);
      el.classList.toggle("hidden", off);
      el.querySelectorAll("input, select").forEach((input) => { input.disabled = off; });
    });
  };
  task.addEventListener("change", sync);
  sync();
  // A chosen config.json or size replaces the preset: clear the preset to say so.
  const preset = form.querySelector("#model");
  form.querySelector("#config").addEventListener("change", (e) => {
    if (e.target.files.length) preset.value = "";
  });
  form.querySelector("#params").addEventListener("input", (e) => {
    if (e.target.value.trim()) preset.value = "";
  });
  form.addEventListener("submit", () => {
    const button = form.querySelector("#submit");
    button.disabled = true;
    button.textContent = button.textContent + "…";
  });
});
