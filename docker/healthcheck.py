"""The image's health check, with Python's standard library only (the image has no curl):

    healthcheck.py          the API answers GET /healthz on AUTOGRADER_PORT (the image's check)
    healthcheck.py worker   a worker's metrics exporter answers on AUTOGRADER_WORKER_METRICS_PORT,
                            which the worker starts once it is warm (docker-compose.yml's check)

Exit 0 when it answers 200, else 1. CI runs this same file against the API and the worker it
starts (tests/deploy/test_image_commands.py).
"""

import os
import sys
import urllib.request

if sys.argv[1:] == ["worker"]:
    url = f"http://127.0.0.1:{os.environ.get('AUTOGRADER_WORKER_METRICS_PORT', '9101')}/metrics"
else:
    url = f"http://127.0.0.1:{os.environ.get('AUTOGRADER_PORT', '8000')}/healthz"
# No proxy, whatever the environment says: the check is about this container's own port.
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    with opener.open(url, timeout=4) as response:
        sys.exit(0 if response.status == 200 else 1)
except OSError as error:
    print(f"unhealthy: {url}: {error}", file=sys.stderr)
    sys.exit(1)
