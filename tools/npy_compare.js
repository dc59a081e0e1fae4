#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Compares two float .npy files: same shape, and max |a - b| / max |b| <= TOL (b is the
// reference; the plain max |a - b| when b is all zeros). Prints one line; exit 0 when within
// the tolerance, 1 otherwise (or when a file is unreadable or the shapes differ).
//
//   node tools/npy_compare.js ACTUAL.npy REFERENCE.npy [--tol 1e-3]
'use strict';
const fs = require('fs');

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + hlen);
  const descr = (header.match(/'descr': '([^']*)'/) || [])[1];
  const Arr = { '<f4': Float32Array, '<f8': Float64Array }[descr];
  if (!Arr) throw new Error(`${file}: dtype ${descr}, not float32/float64`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim().length).map(Number);
  const off = start + hlen;
  return { shape, data: new Arr(buf.buffer.slice(buf.byteOffset + off, buf.byteOffset + buf.length)) };
}

try {
  const args = process.argv.slice(2);
  let tol = 1e-3;
  const files = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--tol') tol = Number(args[++i]);
    else files.push(args[i]);
  }
  if (files.length !== 2) throw new Error('usage: node tools/npy_compare.js ACTUAL.npy REFERENCE.npy [--tol 1e-3]');
  const a = readNpy(files[0]), b = readNpy(files[1]);
  if (a.shape.join(',') !== b.shape.join(',')) {
    console.log(`shape [${a.shape}] vs reference [${b.shape}]`);
    process.exit(1);
  }
  let maxDiff = 0, scale = 0, nan = 0;
  for (let i = 0; i < b.data.length; i++) {
    const d = Math.abs(a.data[i] - b.data[i]);
    if (Number.isNaN(d)) nan++;
    else maxDiff = Math.max(maxDiff, d);
    scale = Math.max(scale, Math.abs(b.data[i]));
  }
  const rel = scale > 0 ? maxDiff / scale : maxDiff;
  const ok = nan === 0 && rel <= tol;
  console.log(`max_abs_diff=${maxDiff.toExponential(2)} scale=${scale.toExponential(2)} rel=${rel.toExponential(2)}` +
    `${nan ? ` nan=${nan}` : ''} (tol ${tol})`);
  process.exit(ok ? 0 : 1);
} catch (e) {
  console.log(`npy_compare: ${e.message}`);
  process.exit(1);
}
