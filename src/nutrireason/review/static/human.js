// The human baseline test's timer: time on the current item since the server first showed it.
// The page carries that moment (data-started) and the server's clock when it was served
// (data-now), both epoch milliseconds, so a reload does not restart the timer and a browser
// clock that is off does not shift it.
(function () {
  var timer = document.getElementById("timer");
  if (!timer) {
    return;
  }
  var started = Number(timer.dataset.started);
  var served = Number(timer.dataset.now);
  if (!isFinite(started) || !isFinite(served)) {
    return;
  }
  var skew = Date.now() - served; // the browser's clock minus the server's
  function show() {
    var seconds = Math.max(0, Math.floor((Date.now() - skew - started) / 1000));
    timer.textContent = Math.floor(seconds / 60) + ":" + String(seconds % 60).padStart(2, "0");
  }
  show();
  window.setInterval(show, 1000);
})();
