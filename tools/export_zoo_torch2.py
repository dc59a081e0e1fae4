#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Exports the anchor zoo models that tools/cuda_device_check.sh does not carry to a GPU machine
# (too large to send) with that machine's torch 2.x, the recipe of
# ../shared/anchors/export_models.py (seeded random weights, opset 13, static shapes; the legacy
# exporter, falling back to the dynamo one). Usage: export_zoo_torch2.py OUT_DIR
import os, sys, time
import numpy as np, torch, torchvision
tv = torchvision.models
out = sys.argv[1]
specs = {"resnet18": (tv.resnet18, (1, 3, 224, 224)), "resnet50": (tv.resnet50, (1, 3, 224, 224)),
         "resnet50_b8": (tv.resnet50, (8, 3, 224, 224)), "efficientnet_b0": (tv.efficientnet_b0, (1, 3, 224, 224)),
         "mobilenet_v2_b8": (tv.mobilenet_v2, (8, 3, 224, 224))}
for name, (fn, shape) in specs.items():
    if os.path.exists(f"{out}/{name}.onnx"):
        continue
    t = time.time()
    torch.manual_seed(0)
    m = fn(weights=None).eval()
    x = torch.randn(*shape)
    try:
        torch.onnx.export(m, (x,), f"{out}/{name}.onnx", opset_version=13, input_names=["input"], output_names=["output"], dynamo=False)
    except Exception as e:
        print("legacy export failed:", e, flush=True)
        torch.onnx.export(m, (x,), f"{out}/{name}.onnx", opset_version=17, input_names=["input"], output_names=["output"])
    np.save(f"{out}/{name}.in.npy", x.numpy())
    print(f"exported {name} in {time.time() - t:.1f}s", flush=True)
