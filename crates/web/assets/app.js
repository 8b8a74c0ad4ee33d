// gitloom web view: keyboard shortcuts only; every page works without this file.
//   /  focus the search box      t  topic tree       l  timeline
//   a  focus "as of"             j / k  next / previous item on the page
//   Enter on a focused item opens its first link.
(function () {
  "use strict";
  function typing(el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }
  function items() {
    return Array.prototype.slice.call(document.querySelectorAll("main .item"));
  }
  function move(step) {
    var list = items();
    if (!list.length) return;
    var at = list.indexOf(document.activeElement);
    var next = list[Math.max(0, Math.min(list.length - 1, at < 0 ? 0 : at + step))];
    list.forEach(function (el) { el.classList.remove("selected"); });
    next.setAttribute("tabindex", "-1");
    next.classList.add("selected");
    next.focus();
    next.scrollIntoView({ block: "nearest" });
  }
  function go(selector) {
    var a = document.querySelector(selector);
    if (a) window.location.href = a.href;
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (typing(e.target)) {
      if (e.key === "Escape") e.target.blur();
      return;
    }
    var q = document.getElementById("q");
    switch (e.key) {
      case "/":
        if (q) { e.preventDefault(); q.focus(); q.select(); }
        break;
      case "a":
        var at = document.getElementById("at");
        if (at) { e.preventDefault(); at.focus(); at.select(); }
        break;
      case "t": go('header nav a[accesskey="t"]'); break;
      case "l": go('header nav a[accesskey="l"]'); break;
      case "j": e.preventDefault(); move(1); break;
      case "k": e.preventDefault(); move(-1); break;
      case "Enter":
        if (document.activeElement && document.activeElement.classList.contains("item")) {
          var link = document.activeElement.querySelector("a[href]");
          if (link) { e.preventDefault(); window.location.href = link.href; }
        }
        break;
    }
  });
})();
