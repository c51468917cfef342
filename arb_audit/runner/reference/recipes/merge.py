"""Average the weights of two fine-tunes."""

import argparse

from arb_audit.runner.reference.tinylm import load_model, save_model

parser = argparse.ArgumentParser()
parser.add_argument("first")
parser.add_argument("second")
parser.add_argument("--out", required=True)
args = parser.parse_args()

a = load_model(args.first).model.state_dict()
b = load_model(args.second).model.state_dict()
merged = load_model(args.first).model
merged.load_state_dict({k: (a[k] + b[k]) / 2 for k in a})
save_model(merged, args.out, name_or_path=args.first)
print(f"merged {args.first} and {args.second} into {args.out}")
