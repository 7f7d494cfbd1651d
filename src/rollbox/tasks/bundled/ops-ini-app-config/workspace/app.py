"""logship: filter application logs and write them as JSON-lines batches.

    python3 app.py [--config logship.ini] --check-config
    python3 app.py [--config logship.ini] run INPUT_DIR [--output-dir DIR]
"""
import argparse
import configparser
import fnmatch
import json
import os
import sys

LEVELS = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}


def load_config(path):
    """Return (settings, errors). Settings are only usable when errors is empty."""
    parser = configparser.ConfigParser()
    try:
        with open(path, encoding="utf-8") as fh:
            parser.read_file(fh)
    except (OSError, configparser.Error) as exc:
        return {}, [f"{path}: {exc}"]
    errors = []

    def get(section, key, convert=str, check=None, expect=""):
        try:
            raw = parser.get(section, key)
        except (configparser.NoSectionError, configparser.NoOptionError):
            errors.append(f"[{section}] {key}: missing")
            return None
        except configparser.InterpolationError as exc:
            errors.append(f"[{section}] {key}: bad interpolation: {exc.message}")
            return None
        try:
            value = convert(raw)
        except ValueError:
            errors.append(f"[{section}] {key}: {raw!r} is not {expect}")
            return None
        if check is not None and not check(value):
            errors.append(f"[{section}] {key}: {raw!r} is not {expect}")
            return None
        return value

    def boolean(raw):
        if raw.lower() not in parser.BOOLEAN_STATES:
            raise ValueError(raw)
        return parser.BOOLEAN_STATES[raw.lower()]

    settings = {
        "pattern": get("input", "pattern"),
        "min_level": get("input", "min_level", str.upper, LEVELS.__contains__,
                         "one of " + ", ".join(LEVELS)),
        "batch_size": get("output", "batch_size", int, lambda n: n > 0, "a positive integer"),
        "dir": get("output", "dir"),
        "tag": get("output", "tag"),
        "include_source": get("output", "include_source", boolean, None, "a boolean"),
    }
    return settings, errors


def read_records(settings, input_dir):
    threshold = LEVELS[settings["min_level"]]
    names = sorted(n for n in os.listdir(input_dir) if fnmatch.fnmatch(n, settings["pattern"]))
    for name in names:
        with open(os.path.join(input_dir, name), encoding="utf-8") as fh:
            for line in fh:
                parts = line.rstrip("\n").split(" ", 2)
                if len(parts) < 3 or parts[1] not in LEVELS or LEVELS[parts[1]] < threshold:
                    continue
                record = {"ts": parts[0], "level": parts[1], "message": parts[2],
                          "tag": settings["tag"]}
                if settings["include_source"]:
                    record["source"] = name
                yield record


def run(settings, input_dir, output_dir):
    os.makedirs(output_dir, exist_ok=True)
    count = 0
    records = list(read_records(settings, input_dir))
    size = settings["batch_size"]
    for start in range(0, len(records), size):
        count += 1
        batch = records[start:start + size]
        with open(os.path.join(output_dir, f"batch-{count:04d}.jsonl"), "w", encoding="utf-8") as fh:
            for record in batch:
                fh.write(json.dumps(record, sort_keys=True) + "\n")
    print(f"logship: {len(records)} record(s) in {count} batch(es) -> {output_dir}")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="logship")
    ap.add_argument("--config", default="logship.ini")
    ap.add_argument("--check-config", action="store_true")
    ap.add_argument("command", nargs="?", choices=["run"])
    ap.add_argument("input_dir", nargs="?")
    ap.add_argument("--output-dir")
    args = ap.parse_args(argv)
    settings, errors = load_config(args.config)
    if errors:
        for err in errors:
            print(f"config error: {err}", file=sys.stderr)
        return 1
    if args.check_config:
        print(f"{args.config}: OK")
        return 0
    if args.command != "run" or not args.input_dir:
        ap.error("expected: run INPUT_DIR")
    run(settings, args.input_dir, args.output_dir or settings["dir"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
