// whichgpu: a little progressive enhancement; every page works without it.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // after a submission, the answer's summary line takes the focus (and the viewport)
  const summary = document.getElementById("summary");
  if (summary) summary.focus();
  markErrors(document);
  live();
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

// each error of a refused form is also shown at its field, and the field marked
function markErrors(root) {
  root.querySelectorAll(".problem [data-field]").forEach((item, i) => {
    const field = root.querySelector(`form [name="${item.dataset.field}"]`);
    if (!field || field.closest(".hidden")) return;
    const note = document.createElement("small");
    note.className = "field-error";
    note.id = `field-error-${i}`;
    note.textContent = item.dataset.text;  // the message without the field's name
    field.setAttribute("aria-invalid", "true");
    field.setAttribute("aria-describedby", note.id);
    field.insertAdjacentElement("afterend", note);
  });
}

// GET forms marked data-live answer as their inputs change (the page is cheap to compute):
// the page for the new query is fetched and its answer swapped in, the form kept as typed
function live() {
  document.querySelectorAll("form[data-live]").forEach((form) => {
    let timer = 0;
    let pending = null;
    const update = () => {
      clearTimeout(timer);
      timer = setTimeout(async () => {
        const query = new URLSearchParams();
        for (const [key, value] of new FormData(form)) {
          if (String(value).trim()) query.append(key, value);
        }
        const url = `${form.action}?${query}`;
        if (pending) pending.abort();
        pending = new AbortController();
        let html;
        try {
          html = await (await fetch(url, { signal: pending.signal })).text();
        } catch (error) {
          if (error.name === "AbortError") return;
          throw error;
        }
        const fresh = new DOMParser().parseFromString(html, "text/html").querySelector("main");
        const main = document.querySelector("main");
        const incoming = fresh && fresh.querySelector(`#${form.id}`);
        if (!incoming) return;
        const focused = document.activeElement;
        const caret = focused && "selectionStart" in focused ? focused.selectionStart : null;
        form.querySelectorAll(".field-error").forEach((el) => el.remove());
        form.querySelectorAll("[aria-invalid]").forEach((el) => el.removeAttribute("aria-invalid"));
        incoming.replaceWith(form);  // the form as typed, into the new answer
        main.replaceWith(fresh);
        if (focused && form.contains(focused)) {
          focused.focus();
          if (caret !== null) focused.setSelectionRange(caret, caret);
        }
        markErrors(fresh);
        history.replaceState(null, "", url);
      }, 350);
    };
    form.addEventListener("input", update);
    form.addEventListener("change", update);
  });
}
