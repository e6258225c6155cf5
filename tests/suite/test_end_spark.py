"""helpers.end_spark, which the Spark test files call when they are done: the JVM really ends, py4j's
threads with it, and a later session in the same worker starts a JVM of its own."""
from __future__ import annotations

import os
import shutil
import threading

import pytest

from helpers import end_spark

pytest.importorskip("pyspark", reason="pyspark not installed (pip install -e '.[spark]' from the clone)")
if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
    pytest.skip("Spark needs Java 17+ (none on PATH or JAVA_HOME)", allow_module_level=True)

pytestmark = pytest.mark.slow   # two Spark JVMs


def _start():
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    assert spark.range(3).count() == 3
    return SparkContext._gateway.proc


def _py4j_threads(settle: bool = False):
    """py4j's threads (the callback server's, the finalizer worker); `settle`: first give each 10 s to end
    (the finalizer worker looks for its shutdown task once a second)."""
    found = [t for t in threading.enumerate() if type(t).__module__.startswith("py4j.")]
    for thread in found if settle else ():
        thread.join(timeout=10)
    return [t for t in found if t.is_alive()]


def test_end_spark_ends_the_jvm_and_a_later_session_starts_another():
    first = _start()
    assert first.poll() is None and _py4j_threads()
    end_spark()
    assert first.poll() is not None, "the JVM outlived end_spark"
    assert _py4j_threads(settle=True) == []
    second = _start()
    try:
        assert second.pid != first.pid and second.poll() is None
    finally:
        end_spark()
    assert second.poll() is not None
    end_spark()      # nothing left to end: a no-op
