"""The trainer contract's names as the TypeScript side defines them (models/train/trainerContract.ts):
the objectives, the data formats of {data} and the WEBRL_TRAIN_* variables a job is told, read from
trainer-contract.json beside this file, which is generated from that module."""

from __future__ import annotations

import json
from pathlib import Path

_CONTRACT = json.loads((Path(__file__).parent / "trainer-contract.json").read_text(encoding="utf-8"))

OBJECTIVES: tuple[str, ...] = tuple(_CONTRACT["objectives"])
DATA_FORMATS: tuple[str, ...] = tuple(_CONTRACT["dataFormats"])
PROMPT_FORMATS: tuple[str, ...] = tuple(_CONTRACT["promptFormats"])
# Setting -> variable name, e.g. VARIABLES["objective"] == "WEBRL_TRAIN_OBJECTIVE".
VARIABLES: dict[str, str] = dict(_CONTRACT["variables"])
