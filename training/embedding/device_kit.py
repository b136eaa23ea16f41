#!/usr/bin/env python3
"""Train the embedding model on a lent GPU: pack what the run needs here, train there, unpack what comes back.

A device run sends the working tree and the paths it carries, 64 MiB in all, and brings back at most 8 files of
16 MiB each (see the device tool's README). The tracked tree alone is ~71 MB, almost all of it the two shipped ONNX
models, which the training does not read; the base weights in float32 are 90 MB. So:

    .venv-train/bin/python training/embedding/device_kit.py pack       # -> .device-kit/ (~54 MB), prints the sizes
    .venv-train/bin/python training/embedding/device_kit.py hide       # the ONNX files leave git's index for the run
    # device run, carry [".device-kit"]: python3 training/embedding/device_kit.py train --epochs 3 --negatives 3
    .venv-train/bin/python training/embedding/device_kit.py restore    # the ONNX files back in git's index
    .venv-train/bin/python training/embedding/device_kit.py unpack FILES_AT   # -> data/embedding/best/, then export.py

``pack`` writes the base model (all-MiniLM-L6-v2) in float16, the training pairs and the training log's
validation sets compressed with xz. ``train`` (on the device: its python3 has torch, transformers and tokenizers)
unpacks them under /tmp, runs :mod:`train` on CUDA and writes the best model's weights to ``$OUT`` in float16,
cut into parts under the size a returned file may have, with the training log. ``unpack`` joins the parts into a
float32 Hugging Face folder ``export.py`` reads. Float16 storage rounds each weight to ~3 significant digits on
the way there and back: far below what a training step changes.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

KIT = ROOT / ".device-kit"
DATA = ROOT / "training" / "data" / "embedding"
# The shipped models: tracked, never read by the training, and most of the tree's size.
MODEL_FILES = ("retrievers/dense/data/grepgraph-code-minilm-v1.onnx",
               "retrievers/dense/data/grepgraph-code-minilm-v1-dynint8.onnx",
               "retrievers/dense/data/grepgraph-code-minilm-v1-query-dynint8.onnx")
EXCLUDE = ROOT / ".git" / "info" / "exclude"
TRAVEL_LIMIT = 64 * 2**20
PART_BYTES = 15 * 2**20  # under the 16 MiB a returned file may have
WEIGHTS = "weights.fp16.safetensors"


def say(line: str) -> None:
    """One line of progress, flushed."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def xz(data: bytes, target: Path) -> None:
    """``data`` compressed with xz (preset 6) into ``target``."""
    with lzma.open(target, "wb", preset=6) as packed:
        packed.write(data)


def unxz(source: Path, target: Path) -> None:
    """The xz file ``source`` decompressed into ``target``."""
    with lzma.open(source, "rb") as packed, open(target, "wb") as raw:
        shutil.copyfileobj(packed, raw, 1 << 20)


def folder_bytes(folder: Path) -> int:
    """The size of every file below ``folder``."""
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def travelling_tree_bytes() -> int:
    """What a device run would send besides the carried paths: the tracked files and the untracked, unignored."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True).stdout.split(b"\0")
    return sum((ROOT / name.decode()).stat().st_size for name in listed
               if name and (ROOT / name.decode()).is_file())


def pack(max_pairs: int | None) -> None:
    """Write ``.device-kit/``: the base model in float16, the pairs and the validation sets, compressed."""
    from train import EVAL_PACKAGES, base_model_dir
    from transformers import AutoModel

    if KIT.exists():
        shutil.rmtree(KIT)
    (KIT / "base").mkdir(parents=True)
    AutoModel.from_pretrained(str(base_model_dir())).half().save_pretrained(str(KIT / "base"), safe_serialization=True)
    pairs = (DATA / "pairs_train.jsonl").read_bytes()
    if max_pairs:
        pairs = b"".join(pairs.splitlines(keepends=True)[:max_pairs])
    xz(pairs, KIT / "pairs_train.jsonl.xz")
    (KIT / "eval").mkdir()
    for name in EVAL_PACKAGES:
        xz((DATA / "eval" / f"{name}.json").read_bytes(), KIT / "eval" / f"{name}.json.xz")
    kit, tree = folder_bytes(KIT), travelling_tree_bytes()
    hidden = sum((ROOT / name).stat().st_size for name in MODEL_FILES if (ROOT / name).exists())
    say(f"kit {kit / 1e6:.1f} MB; tree {tree / 1e6:.1f} MB, {(tree - hidden) / 1e6:.1f} MB with the models hidden; "
        f"limit {TRAVEL_LIMIT / 1e6:.1f} MB")
    if kit + tree - hidden > TRAVEL_LIMIT:
        say("too large to travel: pack fewer pairs (--max-pairs)")
        sys.exit(1)


def hide() -> None:
    """Take the shipped models out of git's index (the files stay) and ignore them, so a device run leaves them."""
    subprocess.run(["git", "-C", str(ROOT), "rm", "-q", "--cached", *MODEL_FILES], check=True)
    EXCLUDE.parent.mkdir(parents=True, exist_ok=True)
    with open(EXCLUDE, "a", encoding="utf-8") as excluded:
        excluded.writelines(f"/{name}\n" for name in MODEL_FILES)
    say(f"tree now {travelling_tree_bytes() / 1e6:.1f} MB; commit nothing before 'device_kit.py restore' (git sees "
        "the models as deleted until then)")


def restore() -> None:
    """Put the shipped models back in git's index and stop ignoring them."""
    subprocess.run(["git", "-C", str(ROOT), "reset", "-q", "--", *MODEL_FILES], check=True)
    if EXCLUDE.exists():
        kept = [line for line in EXCLUDE.read_text().splitlines() if line.lstrip("/") not in MODEL_FILES]
        EXCLUDE.write_text("".join(f"{line}\n" for line in kept))
    status = subprocess.run(["git", "-C", str(ROOT), "status", "--short", "--", *MODEL_FILES],
                            capture_output=True, text=True, check=True).stdout
    say("models back in the index" if not status.strip() else f"check git status:\n{status}")


def train(rest: list[str], kit: Path, out: Path, scratch: Path) -> None:
    """On the device: unpack the kit, train on CUDA (unless ``rest`` says otherwise), write the best model to ``out``.

    ``rest`` goes to :mod:`train` as it is (``--epochs``, ``--batch``, ``--max-pairs`` ...).
    """
    (scratch / "eval").mkdir(parents=True, exist_ok=True)
    unxz(kit / "pairs_train.jsonl.xz", scratch / "pairs_train.jsonl")
    for packed in (kit / "eval").glob("*.json.xz"):
        unxz(packed, scratch / "eval" / packed.name[: -len(".xz")])
    work = scratch / "work"
    command = [sys.executable, str(HERE / "train.py"), "--pairs", str(scratch / "pairs_train.jsonl"),
               "--base", str(kit / "base"), "--eval-dir", str(scratch / "eval"), "--work", str(work),
               "--checkpoint-every", "1000000", *(["--device", "cuda"] if "--device" not in rest else []), *rest]
    say(" ".join(command))
    subprocess.run(command, check=True)
    split_weights(work / "best", out)
    shutil.copy(work / "train_log.jsonl", out / "train_log.jsonl")
    say(json.dumps({"returned": sorted(path.name for path in out.iterdir())}))


def split_weights(best: Path, out: Path) -> None:
    """``best/``'s weights in float16, in parts of at most :data:`PART_BYTES`, and its config and step."""
    import torch
    from safetensors.torch import save
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(best), dtype=torch.float32)
    out.mkdir(parents=True, exist_ok=True)
    data = save({name: tensor.half().contiguous() for name, tensor in model.state_dict().items()})
    for number, start in enumerate(range(0, len(data), PART_BYTES)):
        (out / f"{WEIGHTS}.part{number}").write_bytes(data[start : start + PART_BYTES])
    shutil.copy(best / "config.json", out / "config.json")
    if (best / "step.json").exists():
        shutil.copy(best / "step.json", out / "step.json")


def unpack(returned: Path, target: Path) -> None:
    """Join the returned parts into a float32 Hugging Face folder at ``target`` (``export.py`` reads ``best/``)."""
    from safetensors.torch import load
    from transformers import AutoConfig, AutoModel

    parts = sorted(returned.glob(f"{WEIGHTS}.part*"), key=lambda path: int(path.name.rsplit("part", 1)[1]))
    if not parts:
        raise SystemExit(f"no {WEIGHTS}.part* in {returned}")
    state = load(b"".join(part.read_bytes() for part in parts))
    model = AutoModel.from_config(AutoConfig.from_pretrained(str(returned)))
    model.load_state_dict({name: tensor.float() for name, tensor in state.items()}, strict=True)
    if target.exists():
        shutil.rmtree(target)
    model.save_pretrained(str(target))
    for name in ("step.json", "train_log.jsonl"):
        if (returned / name).exists():
            shutil.copy(returned / name, target / name)
    say(f"{target}: {sum(t.numel() for t in state.values()):,} weights from {len(parts)} parts")


def main() -> None:  # noqa: D103
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", required=True)
    packing = verbs.add_parser("pack", help="write .device-kit/ (here, in .venv-train)")
    packing.add_argument("--max-pairs", type=int, help="only the first N pairs (to fit the travel limit)")
    verbs.add_parser("hide", help="take the shipped models out of git's index for a device run")
    verbs.add_parser("restore", help="put them back")
    training = verbs.add_parser("train", help="on the device: train, write the best model to $OUT "
                                "(other options go to train.py)")
    training.add_argument("--kit", type=Path, default=KIT)
    training.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "/tmp/out")) / "model")
    training.add_argument("--scratch", type=Path, default=Path("/tmp/device-kit"))
    unpacking = verbs.add_parser("unpack", help="join what came back into data/embedding/best/")
    unpacking.add_argument("returned", type=Path, help="the folder holding the returned parts")
    unpacking.add_argument("--target", type=Path, default=DATA / "best")
    args, rest = parser.parse_known_args()
    if rest and args.verb != "train":
        parser.error(f"unrecognised arguments: {' '.join(rest)}")
    if args.verb == "pack":
        pack(args.max_pairs)
    elif args.verb == "hide":
        hide()
    elif args.verb == "restore":
        restore()
    elif args.verb == "train":
        train(rest, args.kit, args.out, args.scratch)
    else:
        unpack(args.returned, args.target)


if __name__ == "__main__":
    main()
