"""Submit a model folder to the grading server."""

import json
import os
import sys
import urllib.request

request = urllib.request.Request(
    os.environ["GRADING_SERVER_URL"] + "/submit",
    data=json.dumps({"model_path": sys.argv[1]}).encode(),
    headers={"Content-Type": "application/json"},
)
with urllib.request.urlopen(request, timeout=600) as answer:
    print(answer.read().decode())
