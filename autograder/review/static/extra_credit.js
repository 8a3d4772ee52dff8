// formgrader's list of a notebook's submissions on the review server: nbgrader adds extra credit to the
// score and the code score ("6 / 4"); this marks each total that holds extra credit as such
// ("6 / 4 (含附加分 / incl. extra credit +2)"), from /autograder/extra_credit (the gradebook's
// extra_credit per submitted notebook). Only numbers from that answer are written, as text.
(function () {
    "use strict";
    var extra = null;
    function annotate() {
        if (extra === null) return;
        var links = document.querySelectorAll("#main-table a[href*='/formgrader/submissions/']");
        for (var i = 0; i < links.length; i++) {
            var id = links[i].getAttribute("href").split("/formgrader/submissions/")[1].split(/[/?]/)[0];
            var value = extra[id];
            var row = links[i].closest("tr");
            if (!value || !row) continue;
            ["td.score", "td.code-score"].forEach(function (sel) {
                var cell = row.querySelector(sel);
                if (!cell || cell.querySelector(".extra-credit-note")) return;
                var note = document.createElement("span");
                note.className = "extra-credit-note label label-info";
                note.style.marginLeft = ".4em";
                note.textContent = "含附加分 / incl. extra credit +" + Number(value);
                cell.appendChild(note);
            });
        }
    }
    var base = (typeof base_url === "string") ? base_url : "";
    var url = base + "/autograder/extra_credit/" + encodeURIComponent(assignment_id) + "/" +
        encodeURIComponent(notebook_id);
    fetch(url, {credentials: "same-origin"})
        .then(function (r) { return r.ok ? r.json() : {}; })
        .then(function (data) { extra = data; annotate(); });
    window.setInterval(annotate, 400); // the table is (re)drawn by formgrader's own script
})();
