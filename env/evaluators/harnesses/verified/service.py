"""WebArena-Verified's official evaluator as a long-lived process for the TypeScript side.

One JSON object a line on stdin, one answer a line on stdout, in order:
  {"id": 1, "op": "assets"}
      -> {"id": 1, "result": {"version", "dataset", "subsets"}}  (the package's own task file and subset folder)
  {"id": 2, "op": "evaluate", "task": {...}, "response": <agent response, any JSON>, "entries": [HAR entries], "sites": {"shopping": "http://..."}}
      -> {"id": 2, "result": <the package's TaskEvalResult, as eval_result.json holds it>, "ms": <its time>}
A request that cannot be served answers {"id": N, "error": "..."}; the process keeps going.
The package is called through its public evaluator class; nothing of its scoring is re-implemented here.
"""

import json
import sys
import time
from importlib.metadata import version
from pathlib import Path

# The package logs; stdout carries the answers only.
answers = sys.stdout
sys.stdout = sys.stderr

from webarena_verified.api.internal.data_reader import WebArenaVerifiedDataReader  # noqa: E402
from webarena_verified.api.internal.evaluator import WebArenaVerifiedEvaluator  # noqa: E402
from webarena_verified.types.config import WebArenaVerifiedConfig  # noqa: E402
from webarena_verified.types.eval import TaskEvalContext  # noqa: E402
from webarena_verified.types.task import WebArenaVerifiedTask  # noqa: E402
from webarena_verified.types.tracing import NetworkTrace  # noqa: E402

base_config = WebArenaVerifiedConfig()
evaluator = WebArenaVerifiedEvaluator(config=base_config, reader=WebArenaVerifiedDataReader(base_config))


def assets() -> dict:
    dataset = Path(base_config.test_data_file)
    return {"version": version("webarena-verified"), "dataset": str(dataset), "subsets": str(dataset.parent / "subsets")}


def evaluate(request: dict) -> dict:
    task = WebArenaVerifiedTask.model_validate(request["task"])
    config = WebArenaVerifiedConfig(environments={f"__{site.upper()}__": {"urls": [url]} for site, url in request["sites"].items()})
    entries = request.get("entries") or []
    # An episode that sent nothing still has a (empty) trace; the package refuses an empty list.
    trace = NetworkTrace.from_content(entries) if entries else NetworkTrace.model_construct(is_playwright=False, src_file=Path("<empty>"), events=())
    context = TaskEvalContext(task=task, agent_response_raw=request.get("response"), network_trace=trace, config=config)
    return json.loads(evaluator.evaluate_task(context=context).model_dump_json())


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            if request["op"] == "assets":
                answer = {"id": request["id"], "result": assets()}
            elif request["op"] == "evaluate":
                started = time.perf_counter()
                result = evaluate(request)
                answer = {"id": request["id"], "result": result, "ms": (time.perf_counter() - started) * 1000}
            else:
                answer = {"id": request["id"], "error": f"unknown op {request['op']!r}"}
        except Exception as error:  # noqa: BLE001 (every failure is answered, the process serves on)
            answer = {"id": request.get("id"), "error": f"{type(error).__name__}: {error}"}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
