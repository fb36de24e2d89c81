// Keyboard shortcuts on an entry: c confirm, f correct, r rationale, x exclude (after a
// reason), j skip, u undo. They work everywhere except while typing text (a note, a text
// field, an open list); Escape leaves a text field.
(function () {
  var TYPING = { textarea: true, select: true };
  var TEXT_INPUTS = { text: true, search: true, email: true, number: true, password: true };

  function typing(target) {
    var tag = (target.tagName || "").toLowerCase();
    if (TYPING[tag] || target.isContentEditable) {
      return true;
    }
    return tag === "input" && TEXT_INPUTS[(target.type || "text").toLowerCase()] === true;
  }

  function excludeReady() {
    var reason = document.getElementById("exclusion");
    var button = document.getElementById("exclude");
    if (reason && button) {
      button.disabled = reason.value === "";
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    var reason = document.getElementById("exclusion");
    if (reason) {
      reason.addEventListener("change", function () {
        excludeReady();
        reason.blur();  // a chosen reason hands the keys back (x then excludes)
      });
      excludeReady();
    }
  });

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) {
      return;
    }
    if (typing(event.target)) {
      if (event.key === "Escape") {
        event.target.blur();
      }
      return;
    }
    var ids = { c: "confirm", f: "correct", r: "rationale", x: "exclude", j: "skip", u: "undo" };
    var element = document.getElementById(ids[event.key]);
    if (!element) {
      return;
    }
    event.preventDefault();
    if (element.id === "exclude" && element.disabled) {
      document.getElementById("exclusion").focus();  // choose a reason first
      return;
    }
    element.click();
  });
})();
