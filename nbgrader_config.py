"""nbgrader course configuration: the reference lives in solutions/, the student release in lessons/."""

c = get_config()  # noqa: F821  (injected by traitlets)

c.CourseDirectory.root = "."
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "lessons"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
c.CourseDirectory.db_url = "sqlite:///build/release-gradebook.db"
c.CourseDirectory.course_id = "pp-course"
# The release is committed without outputs and without nbgrader's header/footer.
c.ClearOutput.enabled = True
c.GenerateAssignment.create_assignment = True
