// Keyboard shortcuts on an entry: c confirm, f correct, r rationale, x exclude, j skip.
document.addEventListener("keydown", function (event) {
  var tag = (event.target.tagName || "").toLowerCase();
  if (tag === "input" || tag === "textarea" || tag === "select" || event.ctrlKey ||
      event.metaKey || event.altKey) {
    return;
  }
  var ids = { c: "confirm", f: "correct", r: "rationale", x: "exclude", j: "skip" };
  var element = document.getElementById(ids[event.key]);
  if (element) {
    event.preventDefault();
    element.click();
  }
});
