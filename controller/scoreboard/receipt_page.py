"""A pack receipt as one printable HTML page with signature lines, for the supervisor to sign.

One self-contained file (no scripts, no external style or font), sized for one A4 or Letter
page, so it prints the same from any browser and can be filed as it is.
"""

from __future__ import annotations

from html import escape

from cardshoe.controller.scoreboard.pack_receipt import PackReceipt, receipt_rows

_STYLE = """
@page { size: A4; margin: 15mm; }
body { font: 10.5pt/1.35 "DejaVu Sans", Arial, sans-serif; color: #000; margin: 0; }
h1 { font-size: 15pt; margin: 0 0 2mm; }
p.lead { margin: 0 0 5mm; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 1.2mm 2mm; }
tr { border-bottom: 0.3pt solid #888; }
th { width: 28%; font-weight: 600; }
td { overflow-wrap: anywhere; font-variant-numeric: tabular-nums; }
.signatures { display: flex; gap: 8mm; margin-top: 14mm; page-break-inside: avoid; }
.signature { flex: 1; }
.line { border-bottom: 0.6pt solid #000; height: 14mm; }
.caption { font-size: 9pt; margin-top: 1mm; }
"""


def receipt_html(receipt: PackReceipt) -> str:
    """The whole page: the receipt's rows, then a signature line for each person."""
    rows = "\n".join(
        f"<tr><th>{escape(label)}</th><td>{escape(value)}</td></tr>"
        for label, value in receipt_rows(receipt)
    )
    signers = (
        ("Dealer (loaded)", receipt.loaded_by),
        ("Supervisor (witnessed)", receipt.witnessed_by),
        ("Date and time", None),
    )
    signatures = "\n".join(
        f'<div class="signature"><div class="line"></div><div class="caption">'
        f"{escape(role)}{': ' + escape(name) if name else ''}</div></div>"
        for role, name in signers
    )
    title = f"Pack receipt: table {receipt.table_id}, shoe {receipt.shoe_id}"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{escape(title)}</title>
<style>{_STYLE}</style>
</head>
<body>
<h1>{escape(title)}</h1>
<p class="lead">The pack's chain of custody and its reconciliation, read from the table's
journal (cardshoe). Check it against the journal with
<code>shoectl journal verify</code> and the record hash below.</p>
<table>
{rows}
</table>
<div class="signatures">
{signatures}
</div>
</body>
</html>
"""
