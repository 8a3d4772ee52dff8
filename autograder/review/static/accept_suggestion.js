// formgrader's submission page on the review server (python -m autograder formgrader): each written answer
// still waiting for the instructor shows the machine's suggested score in its score box, marked as such
// (nbgrader's auto_score is the box's placeholder: grey, italic, "suggested"), and an "accept" button. The
// button only types the suggestion into the box and lets formgrader save it as usual, so the confirmed
// score is the instructor's own manual_score, exactly as if typed. Nothing here reads the submission.
(function () {
    "use strict";
    function label(score) {
        return "采纳建议 / accept " + score;
    }
    function decorate() {
        var boxes = document.querySelectorAll("input.score");
        for (var i = 0; i < boxes.length; i++) {
            var box = boxes[i];
            var offered = box.parentNode.querySelector("button.accept-suggestion");
            var score = box.getAttribute("placeholder");
            var waiting = box.classList.contains("needs_manual_grade") && box.value === "";
            if (!waiting || !score || isNaN(Number(score))) {
                if (offered) offered.remove();
                continue;
            }
            box.classList.add("suggested");
            box.title = "建议得分 / suggested score " + score + " (not confirmed yet)";
            if (offered) continue;
            var button = document.createElement("button");
            button.type = "button";
            button.className = "btn btn-default btn-xs accept-suggestion";
            button.textContent = label(score);
            button.addEventListener("click", (function (target, value) {
                return function () {
                    target.value = value;
                    window.jQuery(target).trigger("change"); // formgrader's GradeUI saves on change
                };
            })(box, score));
            box.parentNode.insertBefore(button, box.nextSibling);
        }
    }
    var style = document.createElement("style");
    style.textContent = "input.score.suggested::placeholder{color:#8a6d00;font-style:italic;opacity:1}" +
        "button.accept-suggestion{margin-left:.4em}";
    document.head.appendChild(style);
    // formgrader fills the boxes after its own requests: follow them for the page's life
    window.setInterval(decorate, 400);
})();
