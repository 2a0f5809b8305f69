"""Browser (JupyterLab + Chromium) tests; a package so that the helper module
``jupyterlab.py`` never shadows the real ``jupyterlab`` package on sys.path."""
