#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Fashion-MNIST from Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist) as .npy
# files the tools read, with python3's standard library only (no numpy):
#   OUT/test_x.npy   float32 [10000, 1, 28, 28], pixels / 255 (as the bundled model was trained)
#   OUT/test_y.npy   uint8 [10000], the class indices
#   OUT/calib_x.npy  float32 [N, 1, 28, 28], the first N training pictures (--calibration N, default 1000)
#
#     python3 tools/fashion_mnist_npy.py OUT [--calibration N] [--data DIR]
import argparse
import array
import gzip
import os
import struct
import sys


def read_idx(path, kind):
    with gzip.open(path, 'rb') as f:
        data = f.read()
    magic, count = struct.unpack('>II', data[:8])
    if kind == 'images':
        if magic != 2051:
            sys.exit(f'fashion_mnist_npy: {path}: not an IDX image file (magic {magic})')
        rows, cols = struct.unpack('>II', data[8:16])
        return count, (rows, cols), data[16:16 + count * rows * cols]
    if magic != 2049:
        sys.exit(f'fashion_mnist_npy: {path}: not an IDX label file (magic {magic})')
    return count, (), data[8:8 + count]


def write_npy(path, descr, shape, payload):
    dims = ', '.join(str(d) for d in shape) + (',' if len(shape) == 1 else '')
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += ' ' * ((64 - (10 + len(header) + 1) % 64) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode('latin1'))
        f.write(payload)


def pixels(raw):
    scaled = array.array('f', [b / 255.0 for b in raw])
    if sys.byteorder != 'little':
        scaled.byteswap()
    return scaled.tobytes()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('out')
    ap.add_argument('--calibration', type=int, default=1000)
    ap.add_argument('--data', default='/usr/share/datasets/fashion-mnist')
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    n, (h, w), test = read_idx(os.path.join(a.data, 't10k-images-idx3-ubyte.gz'), 'images')
    m, _, labels = read_idx(os.path.join(a.data, 't10k-labels-idx1-ubyte.gz'), 'labels')
    if n != m:
        sys.exit(f'fashion_mnist_npy: {n} test pictures but {m} labels')
    write_npy(os.path.join(a.out, 'test_x.npy'), '<f4', (n, 1, h, w), pixels(test))
    write_npy(os.path.join(a.out, 'test_y.npy'), '|u1', (n,), labels)
    t, _, train = read_idx(os.path.join(a.data, 'train-images-idx3-ubyte.gz'), 'images')
    c = min(a.calibration, t)
    write_npy(os.path.join(a.out, 'calib_x.npy'), '<f4', (c, 1, h, w), pixels(train[:c * h * w]))
    print(f'fashion_mnist_npy: {n} test pictures, {c} calibration pictures -> {a.out}')


if __name__ == '__main__':
    main()
