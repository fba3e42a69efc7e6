import { openStore } from "../../src/store/open.ts";
import { storeContract } from "./store-contract.ts";
import { pgDatabase } from "./store-pg-fixture.ts";

storeContract("PostgreSQL", async () => openStore(await pgDatabase()));
