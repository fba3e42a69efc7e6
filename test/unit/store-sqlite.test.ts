import { openStore } from "../../src/store/open.ts";
import { storeContract } from "./store-contract.ts";

storeContract("SQLite", () => openStore("sqlite://:memory:"));
