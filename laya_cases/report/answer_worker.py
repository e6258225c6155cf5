"""The helper process of report/answer_helper.py: `python -m laya_cases.report.answer_worker` renders the
batches of report --json cases it reads on stdin (report/stream.py render_batch) and writes them back."""
from __future__ import annotations

import sys

from laya_cases.report.answer_helper import receive, send
from laya_cases.report.stream import answer_texts, render_batch


def main() -> None:
    answers = answer_texts()
    while True:
        batch = receive(sys.stdin.buffer)
        if batch is None:
            return
        try:
            send(sys.stdout.buffer, render_batch(answers, *batch).encode("utf-8"))
        except Exception as exc:                     # noqa: BLE001 -- the caller re-renders and raises it
            send(sys.stdout.buffer, (str(exc),))


if __name__ == "__main__":
    main()
