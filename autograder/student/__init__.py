"""Tools students run: the self-check, and the Validate button in JupyterLab."""
