import { afterAll } from "bun:test";
import { openStore } from "../../src/store/open.ts";
import { storeContract } from "./store-contract.ts";
import { dropPgDatabases, pgDatabase } from "./store-pg-fixture.ts";

afterAll(dropPgDatabases);

storeContract("PostgreSQL", async () => openStore(await pgDatabase()));
