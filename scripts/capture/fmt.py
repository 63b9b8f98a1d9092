#!/usr/bin/env python3
"""fmt.py FILE...: rewrites scenario files as indented JSON with short values on one line."""
import json
import sys


def fmt(v, ind=0, key_len=0, width=100):
    one = json.dumps(v, ensure_ascii=False)
    if ind + key_len + len(one) <= width or not isinstance(v, (dict, list)) or not v:
        return one
    pad = " " * (ind + 2)
    if isinstance(v, dict):
        items = []
        for k, x in v.items():
            key = json.dumps(k, ensure_ascii=False) + ": "
            items.append(pad + key + fmt(x, ind + 2, len(key), width))
        return "{\n" + ",\n".join(items) + "\n" + " " * ind + "}"
    return "[\n" + ",\n".join(pad + fmt(x, ind + 2, 0, width) for x in v) + "\n" + " " * ind + "]"


if __name__ == "__main__":
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as fh:
            value = json.load(fh)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(fmt(value) + "\n")
