"""nbgrader's configuration in every student's server on the course hub (jupyter-config/jupyterhub_config.py
puts this directory on JUPYTER_CONFIG_PATH; a deployment may copy it to /etc/jupyter/ instead)."""

import os

c = get_config()  # noqa: F821  (injected by traitlets)

c.CourseDirectory.course_id = (
    "pp-course"  # autograder.gradebook.coursedir.COURSE_ID, the id the instructor releases with
)
c.Exchange.root = os.environ.get("PP_EXCHANGE", "/srv/nbgrader/exchange")
# nbgrader names a submission after the OS user (jovyan excepted). With a single-uid spawner every student's
# server runs as the same OS user, so the student is named from the hub; with one system user per student
# this gives the same name
c.CourseDirectory.student_id = os.environ["JUPYTERHUB_USER"]
