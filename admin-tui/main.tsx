// Starts the terminal UI full-screen against a gateway's admin API and resolves when it quits.
import { render } from "ink";
import { HttpAdminApi } from "./api.ts";
import { App } from "./app.tsx";
import { HttpFeed } from "./feed.ts";

export async function runTui(url: string, token: string): Promise<void> {
  const base = url.replace(/\/+$/, "");
  const columns = process.stdout.columns || 80;
  const rows = process.stdout.rows || 24;
  const instance = render(
    <App
      api={new HttpAdminApi(base, token)}
      feed={new HttpFeed(base, token)}
      columns={columns}
      rows={rows}
    />,
    { exitOnCtrlC: true },
  );
  await instance.waitUntilExit();
}
