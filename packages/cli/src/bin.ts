#!/usr/bin/env node
import { runTessera } from "./run-tessera.js";

process.exitCode = await runTessera(process.argv.slice(2));
