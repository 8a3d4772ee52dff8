// nbgrader's Validate dialog, relabelled for the course self-check (autograder/lab_selfcheck.py).
//
// The Validate button and its dialog are nbgrader's. For a notebook of this course the server replies in
// nbgrader's "failed" shape: one entry whose source is the self-check's verdict line (starting with
// "自检 (selfcheck) ✅" or "自检 (selfcheck) ❌") and whose error is the whole report (HTML-escaped). nbgrader
// heads such an entry "The following cell failed:", which is wrong for a notebook that is ready and is
// not the self-check's word either way; this plugin replaces that heading with the verdict's own and,
// for a ready notebook, gives the dialog nbgrader's success style. It only ever sets textContent, class
// names and one style: nothing from the reply becomes markup here.
//
// A prebuilt JupyterLab extension written by hand (no build step): the module-federation container
// JupyterLab's bootstrap loads (window._JUPYTERLAB[name].init / .get("./extension")), with one plugin
// that needs no other module.
(function () {
  "use strict";
  var MARK = "自检 (selfcheck)";
  var READY = MARK + " ✅";

  function relabel(box) {
    if (!box || box.getAttribute("data-selfcheck")) return;
    var pre = box.querySelector("pre");
    if (!pre || pre.textContent.indexOf(MARK) !== 0) return; // nbgrader's own validator: untouched
    var ready = pre.textContent.indexOf(READY) === 0;
    box.setAttribute("data-selfcheck", ready ? "ready" : "not-ready");
    pre.style.whiteSpace = "pre-wrap"; // the verdict and its caveat in full, not cut at the dialog's edge
    var label = box.querySelector("p");
    if (label) {
      label.textContent = ready
        ? "自检结果 / self-check: 可以提交 (ready to submit)"
        : "自检结果 / self-check: 还不能完整评分 (not ready)";
    }
    box.classList.remove("validation-failed");
    box.classList.add(ready ? "validation-selfcheck-ready" : "validation-selfcheck-not-ready");
    var dialog = box.closest(".jp-Dialog");
    if (dialog && ready) {
      dialog.classList.remove("nbgrader-ErrorDialog");
      dialog.classList.add("nbgrader-SuccessDialog");
    }
  }

  function scan(node) {
    if (!node || node.nodeType !== 1) return;
    if (node.id === "validation-message") relabel(node);
    var found = node.querySelectorAll ? node.querySelectorAll("#validation-message") : [];
    for (var i = 0; i < found.length; i++) relabel(found[i]);
  }

  var plugin = {
    id: "autograder-selfcheck:validate-dialog",
    description: "Shows the course self-check's verdict in nbgrader's Validate dialog",
    autoStart: true,
    activate: function () {
      new MutationObserver(function (records) {
        for (var r = 0; r < records.length; r++) {
          var added = records[r].addedNodes;
          for (var i = 0; i < added.length; i++) scan(added[i]);
        }
      }).observe(document.body, { childList: true, subtree: true });
    },
  };

  var modules = { "./extension": { __esModule: true, default: plugin } };
  window._JUPYTERLAB = window._JUPYTERLAB || {};
  window._JUPYTERLAB["autograder-selfcheck"] = {
    init: function () {
      return Promise.resolve();
    },
    get: function (name) {
      if (!(name in modules)) return Promise.reject(new Error("autograder-selfcheck has no module " + name));
      return Promise.resolve(function () {
        return modules[name];
      });
    },
  };
})();
