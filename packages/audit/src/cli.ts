#!/usr/bin/env node
/** `kube-provisioner-audit`; see the package README for flags, output and exit codes. */
import { runAuditCli } from './run-cli.ts';

process.exitCode = await runAuditCli({
  argv: process.argv.slice(2),
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
});
