#!/bin/sh
# Set-up + the main job on a fresh machine: Python packages, the Docker engine, the
# language images (one per registered language, built locally, no registry needed), the
# bundled sample exercises prepared as a dataset, the harness run with the oracle agent, and the report.
set -eu
cd "$(dirname "$0")"
python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore -r requirements.txt
./docker/ensure_engine.sh start
python3 harness.py --build_images_only
# Datasets and runs go to the checkout's data folder, never inside it (docs/usage.md: "Where the default dataset lives").
home=$(python3 -c 'import _standalone; from polyglot_harness.utils.checkout import DATA_HOME; print(DATA_HOME)')
python3 prepare_polyglot_dataset.py --benchmark_dir samples --output_dir "$home/datasets/samples"
python3 harness.py --dataset "$home/datasets/samples" --subset samples --agent oracle --max_workers 2 \
  --model_name_or_path demo_oracle --output_dir "$home/runs/demo" --force
python3 report.py --output_dir "$home/runs/demo"
