// An Astro-aware PWA as such PWAs were written: a classic script, no bridge.js API in sight.
// It uses Astro only when the user agent says it runs in the app.
(function () {
  "use strict";
  var inApp = /Astro App/.test(navigator.userAgent) && !!window.Astro;
  var renders = 0;

  function pwaNavigate() {
    return inApp ? Astro.jsRpcMethod("pwa-navigate", [])() : Promise.resolve();
  }
  function pwaRendered() {
    if (inApp) Astro.jsRpcMethod("pwa-rendered", [])();
  }

  function page() {
    return new URLSearchParams(location.search).get("page") || "start";
  }

  function render() {
    var view = document.getElementById("view");
    var name = page();
    view.innerHTML = "";
    var h1 = document.createElement("h1");
    h1.textContent = { start: "Start", deals: "Deals", help: "Help" }[name] || "Not found";
    view.appendChild(h1);
    renders += 1;
    document.body.setAttribute("data-view", name);
    document.body.setAttribute("data-renders", String(renders));
  }

  document.addEventListener("click", function (event) {
    var a = event.target.closest && event.target.closest("a[data-route]");
    if (!a || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    if (a.href === location.href) return;
    var href = a.href;
    // PUSH: wait for the app, then change the DOM, then report the render.
    pwaNavigate().then(function () {
      history.pushState({}, "", href);
      render();
      pwaRendered();
    });
  });

  // POP: render and report; never pwa-navigate.
  window.addEventListener("popstate", function () {
    render();
    pwaRendered();
  });

  document.getElementById("mode").textContent = inApp ? "in the app (Astro)" : "website";
  document.body.setAttribute("data-in-app", String(inApp));
  render();
  pwaRendered();
})();
