"""Download the jars listed in jars.txt from a Maven repository and verify their sha256."""
import hashlib
import os
import sys
import urllib.request

repository = os.environ.get("MAVEN_REPOSITORY", "https://repo1.maven.org/maven2").rstrip("/")
manifest, destination = sys.argv[1], sys.argv[2]
os.makedirs(destination, exist_ok=True)
for line in open(manifest):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    path, expected = line.split()
    with urllib.request.urlopen(f"{repository}/{path}", timeout=120) as response:
        content = response.read()
    actual = hashlib.sha256(content).hexdigest()
    if actual != expected:
        sys.exit(f"{path}: sha256 {actual} != pinned {expected}")
    with open(os.path.join(destination, os.path.basename(path)), "wb") as jar:
        jar.write(content)
    print(f"fetched {path}")
