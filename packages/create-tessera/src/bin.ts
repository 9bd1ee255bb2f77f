#!/usr/bin/env node
import { createTessera } from "./index.js";

process.exitCode = await createTessera(process.argv.slice(2));
