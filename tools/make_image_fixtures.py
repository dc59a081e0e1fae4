#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Makes the fixtures of tests/image/: a synthetic source picture and what Pillow makes of it.

    /usr/bin/python3 tools/make_image_fixtures.py

Pillow (Debian's python3-pil) is the reference for ember::image's bilinear resize (byte for byte)
and grayscale; the test decodes these PNGs and compares. Re-running rewrites the same bytes.
"""
import pathlib

import numpy as np
from PIL import Image

out = pathlib.Path(__file__).resolve().parent.parent / "tests" / "image" / "fixtures"
out.mkdir(parents=True, exist_ok=True)

# A 53 x 37 RGB picture with gradients, a hard edge and seeded noise: every filter tap matters.
rng = np.random.default_rng(7)
y, x = np.mgrid[0:37, 0:53]
src = np.stack([x * 255 // 52, y * 255 // 36, ((x // 7 + y // 5) % 2) * 200], axis=-1)
src = np.clip(src + rng.integers(-30, 31, src.shape), 0, 255).astype(np.uint8)
Image.fromarray(src, "RGB").save(out / "source_53x37.png")

# Downscales (antialiased), upscales and a mixed one.
for w, h in [(28, 28), (13, 9), (100, 80), (53, 20), (211, 17)]:
    Image.fromarray(src, "RGB").resize((w, h), Image.BILINEAR).save(out / f"bilinear_{w}x{h}.png")
Image.fromarray(src, "RGB").convert("L").save(out / "gray_53x37.png")
print("wrote", sorted(p.name for p in out.iterdir()))
