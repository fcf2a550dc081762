// A claim mark leads to its check in the page's list of checks, which is folded: open
// every folded box around the element an in-page link or the address names, so that the
// browser can scroll to it. Without this script the list is one click away still.
(function () {
  function unfold(id) {
    var target = id && document.getElementById(id);
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    return target;
  }
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest('a[href^="#"]');
    if (link) unfold(decodeURIComponent(link.getAttribute("href").slice(1)));
  });
  function fromAddress() {
    var target = unfold(decodeURIComponent(location.hash.slice(1)));
    if (target) target.scrollIntoView();
  }
  window.addEventListener("hashchange", fromAddress);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fromAddress);
  else fromAddress();
})();
