/** What a handler of one kind (pipe, tcp, udp) reports; `runHandler` adds the name and the duration. */
export interface KindResult {
  ok: boolean;
  error?: string;
  status?: number;
}
