// whichgpu: a little progressive enhancement; every page works without it.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("recommend-form");
  if (!form) return;
  const task = form.querySelector("#task");
  const inference = form.querySelectorAll(".inference");
  const sync = () => {
    const serving = task.value === "inference";
    inference.forEach((el) => el.classList.toggle("hidden", !serving));
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
