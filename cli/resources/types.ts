import type { ApiVersion } from '../../proto/api.ts';
import type { Column } from '../output/columns.ts';

/** A flag of `create`/`update` that sets one field of the body (docs/cli.md#resources). */
export interface FieldFlag {
  /** Commander's flag text, e.g. `--interval <seconds>`. */
  flags: string;
  description: string;
  /** Dotted path of the field in the flat body. */
  field: string;
  /** How the flag's text becomes the value. */
  parse: 'string' | 'int' | 'list' | 'bool' | 'labels';
}

/** How the generic commands write one kind of resource. */
export interface WriteMethods {
  /** `create`: POST to the collection, POST or PUT to the item's path; absent: not offered. */
  create?: 'post' | 'post-item' | 'put';
  /** `update --file`: PUT to the item's path (create or replace). */
  replace: boolean;
  /** `update` with field flags: a merge patch. */
  patch: boolean;
  delete: boolean;
}

/** One kind of resource the API serves, as monitorctl names, addresses, shows and writes it. */
export interface ResourceType {
  /** The command (`check`) and its plural alias (`checks`); `aliases` are further names. */
  singular: string;
  plural: string;
  aliases: string[];
  /** Short names shown by `describe-type` and accepted where a type is named. */
  shortNames: string[];
  apiVersion: ApiVersion;
  /** The path segment of the API (`checks`, `authproviders`). */
  segment: string;
  /** `type` of the wrapped form, as in Sensu dumps (`CheckConfig`). */
  type: string;
  /** Other `type`s a wrapped file of this kind may carry (`Hook`; `ad` and `oidc` beside `ldap`). */
  otherTypes: string[];
  namespaced: boolean;
  /** Whether the API lists it across namespaces at `/<segment>`. */
  allNamespacesRoute: boolean;
  /** Its identity on the command line: `['NAME']`, or `['ENTITY', 'CHECK']` for events. */
  keyArgs: string[];
  /** The identity of an item, joined by `/` when it has several parts. */
  nameOf(item: Record<string, unknown>): string;
  /** Where a body carries its name (`metadata.name`, or `name`, `username`); events carry theirs in parts. */
  nameField: string | undefined;
  /** The API answers items already wrapped (`{type, api_version, metadata, spec}`). */
  wrappedInApi: boolean;
  /** The columns of `list` in tabular format, and the fields of `info`. */
  columns: Column[];
  writes: WriteMethods;
  /** Flags of `create` and `update` that set fields. */
  fieldFlags: FieldFlag[];
  /** One line for --help and describe-type. */
  description: string;
}
