#!/usr/bin/env python3
"""Converts Natural Earth's 1:110m admin-0 countries, as the TopoJSON `countries-110m.json` of the
npm package world-atlas 2.0.2 carries them, into `countries-110m.txt`, the outlines `roastery eudr`
draws. Run once by hand (`npm pack world-atlas@2.0.2`, unpack, then
`python3 countries.py package/countries-110m.json > countries-110m.txt`); nothing fetches at build
or run time.

Output, after the `#` lines: one line per country, `id<TAB>name<TAB>rings`, rings separated by `;`.
A ring is `x,y,dx,dy,dx,dy,...` in hundredths of a degree (longitude, latitude): the first
position, then each next one as the difference from the one before; repeated positions dropped. A ring that crosses the antimeridian is unwrapped, so its longitudes
run past 180 (or below -180) rather than jumping across the map.
"""
import json
import sys


def main(path):
    topo = json.load(open(path, encoding="utf-8"))
    (sx, sy), (tx, ty) = topo["transform"]["scale"], topo["transform"]["translate"]
    arcs = []
    for arc in topo["arcs"]:
        x = y = 0
        points = []
        for dx, dy in arc:
            x, y = x + dx, y + dy
            points.append((round((x * sx + tx) * 100), round((y * sy + ty) * 100)))
        arcs.append(points)

    def ring(indexes):
        out = []
        for i in indexes:
            points = arcs[i] if i >= 0 else arcs[~i][::-1]
            out.extend(points if not out else points[1:])
        return out

    print("# Natural Earth 1:110m Cultural Vectors, Admin 0 - Countries (version 4.1.0), public domain")
    print("# (naturalearthdata.com), from countries-110m.json of the npm package world-atlas 2.0.2")
    print("# (ISC licence; the data is Natural Earth's). Converted by countries.py beside this file.")
    for country in topo["objects"]["countries"]["geometries"]:
        kind = country["type"]
        polygons = (
            [country["arcs"]] if kind == "Polygon"
            else country["arcs"] if kind == "MultiPolygon"
            else []
        )
        rings = []
        for polygon in polygons:
            for r in polygon:
                points = ring(r)
                kept = [p for i, p in enumerate(points) if i == 0 or p != points[i - 1]]
                if len(kept) < 4:
                    continue
                steps = [(x1 - x0, y1 - y0) for (x0, y0), (x1, y1) in zip(kept, kept[1:])]
                # A ring crossing the antimeridian (Fiji, Chukotka) jumps by about 360 degrees:
                # unwrapped, it runs on past 180 (the drawing repeats it 360 degrees over). One
                # that still does not close once unwrapped (Antarctica) goes round the pole and
                # is kept as it is: its jump is the line along the map's edge.
                unwrapped = [(dx - 36000 * round(dx / 36000), dy) for dx, dy in steps]
                if sum(dx for dx, _ in unwrapped) == 0:
                    steps = unwrapped
                numbers = [kept[0][0], kept[0][1]]
                for dx, dy in steps:
                    numbers += [dx, dy]
                rings.append(",".join(map(str, numbers)))
        if rings:
            name = country["properties"]["name"].replace("\t", " ")
            print(f"{country.get('id', '-')}\t{name}\t{';'.join(rings)}")


if __name__ == "__main__":
    main(sys.argv[1])
