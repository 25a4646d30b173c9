/**
 * A Kysely query compiled once per repository: later runs reuse its SQL with their own parameters.
 * Kysely builds and compiles a query on every run, which costs more than running a small read on
 * SQLite (bench/http), so the reads made on every request are prepared this way.
 */
import type { Compilable, CompiledQuery, Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyKysely = Kysely<any>;

export class PreparedQuery<Params extends readonly string[], Row> {
  private compiled: CompiledQuery<Row> | undefined;
  /** For each compiled parameter, the index of the run's parameter it stands for (-1: a constant of the query). */
  private places: number[] = [];

  /** `build` is called once, with stand-ins for the parameters; it must pass each one as a value (never inline it). */
  constructor(
    private readonly db: AnyKysely,
    private readonly build: (db: AnyKysely, ...params: Params) => Compilable<Row>,
  ) {}

  async run(...params: Params): Promise<Row[]> {
    const compiled = this.compiled ?? this.compile(params.length);
    const parameters = this.places.map((place, i) => (place < 0 ? compiled.parameters[i] : params[place]));
    const result = await this.db.executeQuery<Row>({ ...compiled, parameters });
    return result.rows;
  }

  private compile(count: number): CompiledQuery<Row> {
    const standIns = Array.from({ length: count }, (_, i) => `\u0000prepared-parameter-${i}`) as unknown as Params;
    const compiled = this.build(this.db, ...standIns).compile();
    this.places = compiled.parameters.map((value) => standIns.indexOf(value as string));
    const missing = standIns.findIndex((standIn) => !compiled.parameters.includes(standIn));
    if (missing >= 0) throw new Error(`Prepared query: parameter ${missing} is not passed as a value`);
    this.compiled = compiled;
    return compiled;
  }
}
