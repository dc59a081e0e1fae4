#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// The reference side of the model tests: runs an ONNX model with ONNX Runtime (onnxruntime-node)
// the way ember-run runs it with ember, and writes every output as DIR/<name>.npy (names
// sanitised to [A-Za-z0-9._-] as ember-run does).
//
//   node tools/ort_run.js MODEL.onnx --input NAME=FILE.npy ... --output-dir DIR [--threads N]
//
// onnxruntime-node is taken from $ORT_NODE_DIR, else ~/.cache/ember-anchors/node_modules/
// onnxruntime-node (what /work/shared/anchors/setup.sh installs). Exits 1 with one line on
// stderr on any failure.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const DTYPES = {  // .npy descr -> [ORT type, typed array]
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '|i1': ['int8', Int8Array],
  '|u1': ['uint8', Uint8Array], '<i2': ['int16', Int16Array], '<u2': ['uint16', Uint16Array],
  '<i4': ['int32', Int32Array], '<u4': ['uint32', Uint32Array], '<i8': ['int64', BigInt64Array],
  '<u8': ['uint64', BigUint64Array], '|b1': ['bool', Uint8Array],
};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + hlen);
  const descr = (header.match(/'descr': '([^']*)'/) || [])[1];
  if (!DTYPES[descr]) throw new Error(`${file}: unsupported dtype ${descr}`);
  if (/'fortran_order': True/.test(header)) throw new Error(`${file}: Fortran order is not supported`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim().length).map(Number);
  const [type, Arr] = DTYPES[descr];
  const off = start + hlen;
  const bytes = buf.buffer.slice(buf.byteOffset + off, buf.byteOffset + buf.length);
  const data = new Arr(bytes);
  return { type, shape, data: type === 'bool' ? Array.from(data, (x) => x !== 0) : data };
}

function writeNpy(file, tensor) {
  const entry = Object.entries(DTYPES).find(([, v]) => v[0] === tensor.type);
  if (!entry) throw new Error(`cannot write ${tensor.type} as .npy`);
  const dims = tensor.dims.map(Number);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let dict = `{'descr': '${entry[0]}', 'fortran_order': False, 'shape': ${shape}, }`;
  if (dims.length > 0) dict += ' '.repeat(Math.max(0, 21 - String(dims[0]).length));
  dict += ' '.repeat(64 - ((10 + dict.length + 1) % 64)) + '\n';
  const head = Buffer.alloc(10);
  Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]).copy(head);
  head.writeUInt16LE(dict.length, 8);
  let data = tensor.data;
  if (tensor.type === 'bool') data = Uint8Array.from(data, (x) => (x ? 1 : 0));
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(dict, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

const sanitise = (name) => {
  const s = name.replace(/[^A-Za-z0-9._-]/g, '_');
  return s === '' || s === '.' || s === '..' ? '_' + s : s;
};

async function main(argv) {
  let model = null, outDir = null, threads = 1;
  const inputs = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--input') {
      const v = argv[++i] || '';
      const eq = v.indexOf('=');
      if (eq <= 0) throw new Error(`--input: expected NAME=FILE.npy, got '${v}'`);
      inputs.push([v.slice(0, eq), v.slice(eq + 1)]);
    } else if (a === '--output-dir') outDir = argv[++i];
    else if (a === '--threads') threads = Number(argv[++i]);
    else if (a.startsWith('--')) throw new Error(`${a}: unknown flag`);
    else model = a;
  }
  if (!model || !outDir) throw new Error('usage: node tools/ort_run.js MODEL.onnx --input NAME=FILE.npy ... --output-dir DIR [--threads N]');
  const ortDir = process.env.ORT_NODE_DIR || path.join(os.homedir(), '.cache/ember-anchors/node_modules/onnxruntime-node');
  const ort = require(ortDir);
  const sess = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all', executionMode: 'sequential',
  });
  const feeds = {};
  for (const [name, file] of inputs) {
    const t = readNpy(file);
    feeds[name] = new ort.Tensor(t.type, t.data, t.shape);
  }
  const out = await sess.run(feeds);
  fs.mkdirSync(outDir, { recursive: true });
  for (const name of sess.outputNames) writeNpy(path.join(outDir, sanitise(name) + '.npy'), out[name]);
  await sess.release();
}

main(process.argv.slice(2)).catch((e) => {
  console.error(`ort_run: ${String(e && e.message ? e.message : e).replace(/\s*\n\s*/g, ' ')}`);
  process.exit(1);
});
