#!/usr/bin/env bash
# build/interop.sh [VENV]   (make interop)
#
# Apache Spark reads databases that arcadego flushed, as Delta Lake tables,
# and must return exactly what db.scan returns (tests/interop/spark_read.py).
# Not part of `make test`: it needs Java and a 400 MB pyspark, and a Spark
# session takes a minute or two on a small machine.
#
# Installs what it needs:
#   - Java 17 (Debian: openjdk-17-jre-headless, through apt-get) when no
#     `java` of version 17 or later is on PATH;
#   - the virtualenv VENV (default .venv-interop) with the package and its
#     test dependencies (build/pyenv.sh), plus pyspark;
#   - the Delta Lake jars for Spark, from Maven Central, into VENV/jars
#     (with mvn when it is there, else by direct download, SHA-1 checked).
#     They go to Spark as spark.jars: Spark's own Ivy resolution
#     (spark.jars.packages) trips over POM-only entries in ~/.m2.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${1:-$root/.venv-interop}
PYSPARK_VERSION=4.2.0
DELTA_VERSION=4.4.0 # 4.4.1's POM names jars that Maven Central does not serve
JARS=("io.delta:delta-spark_4.2_2.13:$DELTA_VERSION" "io.delta:delta-storage:$DELTA_VERSION")
MAVEN_CENTRAL=https://repo1.maven.org/maven2

start=$(date +%s)

# --- Java 17 ---------------------------------------------------------------
java_major() {
	"$1" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}' | cut -d. -f1
}
java_ok() {
	command -v java >/dev/null && [[ $(java_major java) -ge 17 ]]
}
if ! java_ok; then
	jdk=$(ls -d /usr/lib/jvm/java-17-openjdk-* 2>/dev/null | head -1 || true)
	if [[ -z $jdk ]]; then
		if [[ $(id -u) -ne 0 ]]; then
			echo "build/interop.sh: Java 17 is missing; as root: apt-get update && apt-get install -y openjdk-17-jre-headless" >&2
			exit 1
		fi
		echo "== installing Java 17 (openjdk-17-jre-headless)"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null
		jdk=$(ls -d /usr/lib/jvm/java-17-openjdk-* | head -1)
	fi
	export JAVA_HOME=$jdk
	export PATH=$JAVA_HOME/bin:$PATH
fi
echo "== java $(java_major java): $(command -v java)"

# --- the virtualenv ----------------------------------------------------------
echo "== virtualenv $venv"
"$root/build/pyenv.sh" "$venv"
"$venv/bin/python" -m pip --disable-pip-version-check -q install "pyspark==$PYSPARK_VERSION"

# --- the Delta jars ----------------------------------------------------------
jardir=$venv/jars
mkdir -p "$jardir"
jars=()
for coord in "${JARS[@]}"; do
	IFS=: read -r group artifact version <<<"$coord"
	jar=$jardir/$artifact-$version.jar
	if [[ ! -s $jar ]] && command -v mvn >/dev/null; then
		echo "== mvn dependency:copy $coord"
		mvn -q -B dependency:copy -Dartifact="$coord" -DoutputDirectory="$jardir" >/dev/null 2>&1 ||
			{ echo "   mvn failed; downloading instead"; rm -f "$jar"; }
	fi
	if [[ ! -s $jar ]]; then
		url=$MAVEN_CENTRAL/${group//.//}/$artifact/$version/$artifact-$version.jar
		echo "== downloading $url"
		"$venv/bin/python" - "$url" "$jar" <<'EOF'
import hashlib, os, sys, urllib.request
url, dest = sys.argv[1], sys.argv[2]
with urllib.request.urlopen(url + ".sha1", timeout=60) as r:
    want = r.read().decode().split()[0].strip()
with urllib.request.urlopen(url, timeout=300) as r:
    data = r.read()
got = hashlib.sha1(data).hexdigest()
if got != want:
    sys.exit(f"{url}: SHA-1 {got}, Maven Central says {want}")
with open(dest + ".part", "wb") as f:
    f.write(data)
os.replace(dest + ".part", dest)
EOF
	fi
	jars+=("$jar")
done

# --- the check -----------------------------------------------------------------
echo "== spark reads arcadego's Delta tables (setup took $(($(date +%s) - start)) s)"
status=0
"$venv/bin/python" "$root/tests/interop/spark_read.py" --jars "$(IFS=,; echo "${jars[*]}")" || status=$?
echo "make interop: $(($(date +%s) - start)) s in all"
exit $status
