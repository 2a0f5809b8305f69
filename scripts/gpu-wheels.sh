# Sourced by the GPU check scripts: installs the wheels put in .whl/ (git-ignored; for
# dependencies missing on a machine with no network) into /tmp/site and puts it on
# PYTHONPATH. Expects $python.
if compgen -G ".whl/*.whl" >/dev/null; then
    $python -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
