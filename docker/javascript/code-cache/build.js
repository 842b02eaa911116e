'use strict';
// IMAGE BUILD time only (Dockerfile): preloaded into runs of the image's own sample exercise,
// it compiles the image's modules as hook.js does and, when the process exits, writes what V8
// compiled of each (after running: the functions that ran are in it) into the cache
// directory. The Dockerfile then makes the directory root's and read-only.
const fs = require('fs');
const path = require('path');
const { install, installForScripts, CACHE_DIR } = require('./hook');

const scripts = new Map();
const record = (script, key) => scripts.set(key, script);
installForScripts(record);
install(record);
process.on('exit', () => {
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  for (const [key, script] of scripts) {
    const file = path.join(CACHE_DIR, key);
    if (!fs.existsSync(file)) fs.writeFileSync(file, script.createCachedData());
  }
});
