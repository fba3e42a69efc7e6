import { defineConfig } from "drizzle-kit";

// The PostgreSQL migrations, from the pg twin of the one schema (src/store/schema-pg.ts).
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/store/schema-pg.ts",
  out: "./migrations/pg",
});
