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

// The human baseline's timer: seconds on the current item.
(function () {
  var timer = document.getElementById("timer");
  if (!timer) {
    return;
  }
  var start = Date.now();
  window.setInterval(function () {
    var seconds = Math.floor((Date.now() - start) / 1000);
    timer.textContent = Math.floor(seconds / 60) + ":" + String(seconds % 60).padStart(2, "0");
  }, 1000);
})();
