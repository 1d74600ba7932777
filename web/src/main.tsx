import { render } from "preact";
import { App } from "./app.js";
import { wire } from "./app-state.js";
import "./styles.css";

wire.start();
render(<App />, document.getElementById("app")!);
