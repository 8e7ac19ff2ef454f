// whichgpu: a little progressive enhancement; every page works without it.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // after a submission, the answer's summary line takes the focus (and the viewport)
  const summary = document.getElementById("summary");
  if (summary) summary.focus();
  // each error of a refused form is also shown at its field, and the field marked
  document.querySelectorAll(".problem [data-field]").forEach((item, i) => {
    const field = document.querySelector(`form [name="${item.dataset.field}"]`);
    if (!field || field.closest(".hidden")) return;
    const note = document.createElement("small");
    note.className = "field-error";
    note.id = `field-error-${i}`;
    note.textContent = item.dataset.text;  // the message without the field's name
    field.setAttribute("aria-invalid", "true");
    field.setAttribute("aria-describedby", note.id);
    field.insertAdjacentElement("afterend", note);
  });
  // every form with a task: the fields the chosen task reads; the others hidden, not sent
  document.querySelectorAll("form").forEach((any) => {
    const chosen = any.querySelector("select[name=task]");
    if (!chosen) return;
    const inference = any.querySelectorAll(".inference");
    const perTask = any.querySelectorAll("[data-tasks]");
    const sync = () => {
      inference.forEach((el) => el.classList.toggle("hidden", chosen.value !== "inference"));
      perTask.forEach((el) => {
        const off = !el.dataset.tasks.split(" ").includes(chosen.value);
        el.classList.toggle("hidden", off);
        el.querySelectorAll("input, select").forEach((input) => { input.disabled = off; });
      });
    };
    chosen.addEventListener("change", sync);
    sync();
  });
  const form = document.getElementById("recommend-form");
  if (!form) return;
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

// Tables marked "sortable" sort by a column when its header is clicked (numbers by their
// data-sort value; a second click reverses); a search box filters the catalog's rows.
document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("table.sortable").forEach((table) => {
    const body = table.tBodies[0];
    table.querySelectorAll("thead th").forEach((th, column) => {
      th.tabIndex = 0;
      th.setAttribute("role", "columnheader");
      const sort = () => {
        const ascending = th.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("thead th").forEach((other) => other.removeAttribute("aria-sort"));
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const key = (row) => {
          const cell = row.cells[column];
          const value = cell.dataset.sort;
          if (value !== undefined) return value === "" ? Infinity : parseFloat(value);
          return cell.textContent.trim().toLowerCase();
        };
        const rows = Array.from(body.rows);
        rows.sort((a, b) => {
          const x = key(a), y = key(b);
          const order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
          return ascending ? order : -order;
        });
        rows.forEach((row) => body.appendChild(row));
      };
      th.addEventListener("click", sort);
      th.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); } });
    });
  });
  const filter = document.getElementById("catalog-filter");
  if (filter) {
    const rows = document.querySelectorAll("#catalog tbody tr");
    filter.addEventListener("input", () => {
      const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
      rows.forEach((row) => {
        const text = (row.dataset.text || row.textContent).toLowerCase();
        row.classList.toggle("hidden", !words.every((w) => text.includes(w)));
      });
    });
  }
});
