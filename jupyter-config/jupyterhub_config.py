"""JupyterHub configuration for this course (docs/JUPYTERHUB.md explains each part and what a real
deployment changes). tests/browser/test_jupyterhub.py runs the hub with exactly this file:

    PP_HUB_STATE=... PP_EXCHANGE=... jupyterhub -f jupyter-config/jupyterhub_config.py

Everything a deployment chooses comes from the environment, with a production-like default:

    PP_HUB_BIND_URL      where students connect (default http://127.0.0.1:8000; put TLS in front)
    PP_HUB_API_PORT      the hub's internal API port on loopback (default 8081)
    PP_PROXY_API_PORT    configurable-http-proxy's API port on loopback (default 8001)
    PP_CHP               the configurable-http-proxy executable (default: on PATH)
    PP_HUB_STATE         the hub's database, cookie secret, proxy pid (default /srv/jupyterhub)
    PP_HUB_HOMES         one home directory per user, single-uid spawner only (default /srv/homes)
    PP_EXCHANGE          nbgrader's exchange, shared by everyone (default /srv/nbgrader/exchange)
    PP_HUB_USERS         the allowed user names, comma-separated
    PP_HUB_PASSWORD      the shared test password of the dummy authenticator (test only: see the doc)
    PP_HUB_TESTING=1     the browser test only: Lab exposes window.jupyterapp so the test reads cells back
"""

import os
import sys
from pathlib import Path

c = get_config()  # noqa: F821  (injected by traitlets)

HERE = Path(__file__).resolve().parent
env = os.environ.get
state = Path(env("PP_HUB_STATE", "/srv/jupyterhub"))

# --- network: everything on loopback except the public URL
c.JupyterHub.bind_url = env("PP_HUB_BIND_URL", "http://127.0.0.1:8000")
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{env('PP_HUB_API_PORT', '8081')}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{env('PP_PROXY_API_PORT', '8001')}"
c.ConfigurableHTTPProxy.command = [env("PP_CHP", "configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(state / "jupyterhub.pid")

# --- who may log in. The test uses the dummy authenticator with one shared password; a course uses PAM
# (system users), its institution's OAuth/LTI, or TLJH's/Z2JH's authenticator instead
c.JupyterHub.authenticator_class = "dummy"
if not env("PP_HUB_PASSWORD"):  # the dummy authenticator without a password lets anyone in
    sys.exit(
        "jupyterhub_config.py: set PP_HUB_PASSWORD (or configure a real authenticator: docs/JUPYTERHUB.md)"
    )
c.DummyAuthenticator.password = env("PP_HUB_PASSWORD")
c.Authenticator.allowed_users = {u for u in env("PP_HUB_USERS", "").split(",") if u}

# --- one JupyterLab per user, in its own home; single-uid: every server runs as the hub's own user (test
# only: no isolation between users; a course uses LocalProcessSpawner with system users, or containers)
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(Path(env("PP_HUB_HOMES", "/srv/homes")) / "{username}")
c.Spawner.cmd = [str(Path(sys.prefix) / "bin" / "jupyterhub-singleuser")]  # this environment's server
c.Spawner.default_url = "/lab"
c.Spawner.args = ["--ServerApp.allow_root=True"] if os.geteuid() == 0 else []
if env("PP_HUB_TESTING") == "1":  # the browser test reads the notebook models back (window.jupyterapp)
    c.Spawner.args.append("--LabApp.expose_app_in_browser=True")
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
# the students' nbgrader configuration (exchange, course id, student id) and Lab page config (students'
# menus only) live in jupyter-config/hub/, found through JUPYTER_CONFIG_PATH; the server extensions of
# this environment (nbgrader's assignment list, Validate → self-check) are enabled in its etc/jupyter
c.Spawner.environment = {
    "JUPYTER_CONFIG_PATH": str(HERE / "hub"),
    "PP_EXCHANGE": env("PP_EXCHANGE", "/srv/nbgrader/exchange"),
}
