#!/usr/bin/env node
// What npm links as the bin at install time, before any build: the program is `dist/cli.js`.
import '../dist/cli.js';
