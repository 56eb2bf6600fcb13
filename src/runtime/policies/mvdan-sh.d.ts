// The parts of mvdan-sh (mvdan/sh's syntax package compiled to JavaScript by GopherJS) that
// shellCommands.ts uses. Its nodes are Go structs seen through GopherJS wrappers: fields are
// properties, positions are objects with an Offset() method (a UTF-8 byte offset), and a wrapper
// is made afresh on each access (never compare nodes by identity).
declare module 'mvdan-sh' {
  export interface ShPos {
    Offset(): number;
  }
  export interface ShNode {
    Pos(): ShPos;
    End(): ShPos;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    readonly [field: string]: any;
  }
  export interface ShParser {
    Parse(src: string, name: string): ShNode;
  }
  export interface ShParseError {
    Error(): string;
  }
  export interface ShPrinter {
    /** The program of a parsed file, formatted as `shfmt` does. */
    Print(node: ShNode): string;
  }
  const sh: {
    readonly syntax: {
      NewParser(...options: unknown[]): ShParser;
      NewPrinter(...options: unknown[]): ShPrinter;
      NodeType(node: ShNode): string;
      Walk(node: ShNode, visit: (node: ShNode | null) => boolean): void;
      Variant(lang: unknown): unknown;
      readonly LangBash: unknown;
    };
  };
  export default sh;
}
