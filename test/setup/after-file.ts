import { afterAll } from "vitest";
import { runFileCleanups } from "../helpers/after-file.js";

// A setup file runs for every test file, shared module graph or not.
afterAll(runFileCleanups);
